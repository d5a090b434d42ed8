// Pointer input for a RankGrid: hover tooltip, click, wheel zoom, drag to pan.
const DRAG_PX = 4;

export function bindInput(grid) {
  const c = grid.canvas;
  let down = null;
  c.addEventListener(
    "wheel",
    (ev) => {
      ev.preventDefault();
      const rect = c.getBoundingClientRect();
      grid.zoomAt(ev.deltaY < 0 ? 1.25 : 0.8, ev.clientX - rect.left, ev.clientY - rect.top);
    },
    { passive: false },
  );
  c.addEventListener("pointerdown", (ev) => {
    down = { x: ev.clientX, y: ev.clientY, ox: grid.view.ox, oy: grid.view.oy, moved: false };
    c.setPointerCapture(ev.pointerId);
  });
  c.addEventListener("pointermove", (ev) => {
    if (down) {
      const dx = ev.clientX - down.x;
      const dy = ev.clientY - down.y;
      down.moved ||= Math.hypot(dx, dy) > DRAG_PX;
      if (down.moved && grid.view.zoom > 1) {
        grid.view.ox = down.ox + dx;
        grid.view.oy = down.oy + dy;
        grid.clampView();
        grid.draw();
      }
      return;
    }
    grid.opts.onHover?.(grid.hitAt(ev.clientX, ev.clientY), ev);
  });
  c.addEventListener("pointerup", (ev) => {
    const click = down && !down.moved;
    down = null;
    if (!click) return;
    const h = grid.hitAt(ev.clientX, ev.clientY);
    // An aggregated node box opens up first; a visible GPU is selected.
    if (h && grid.isAggregated()) grid.zoomToNode(h.node);
    else grid.opts.onClick?.(h);
  });
  c.addEventListener("pointerleave", () => grid.opts.onHover?.(null, null));
  new ResizeObserver(() => grid.layout && grid.resize()).observe(c.parentElement);
}

// The shared tooltip: rank, coordinate, node and groups (or the node when aggregated).
export function showTip(tip, wrap, html, ev) {
  if (!html || !ev) {
    tip.hidden = true;
    return;
  }
  tip.innerHTML = html;
  tip.hidden = false;
  const box = wrap.getBoundingClientRect();
  const x = Math.min(ev.clientX - box.left + 14, box.width - tip.offsetWidth - 4);
  tip.style.left = `${Math.max(0, x)}px`;
  tip.style.top = `${ev.clientY - box.top + 14}px`;
}
