// Plotly is the vendored, versioned file this server ships. It is big, so a page asks for
// it only when it has a chart to draw (the flow view always; the overview for cost charts).
let loading = null;

export function whenPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  loading ??= new Promise((resolve, reject) => {
    const src = document.body.dataset.plotlySrc;
    let script = document.querySelector(`script[src="${src}"]`);
    if (!script) {
      script = Object.assign(document.createElement("script"), { src });
      document.head.appendChild(script);
    }
    script.addEventListener("load", () => resolve(window.Plotly), { once: true });
    script.addEventListener("error", reject, { once: true });
  });
  return loading;
}

export const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
