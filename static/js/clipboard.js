// Text to the clipboard, with the old selection route where the Clipboard API is refused (no
// permission, plain http); true when it was copied. Shared by "Copy link" and "Copy as".
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}
