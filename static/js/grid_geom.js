// Where each GPU cell sits, in grid units (one cell = 1 unit). Nodes are boxes laid out in
// rank order, because a node is physical: changing the rank order moves the groups, not
// the boxes, which is exactly what the order comparison is meant to show.

const GAP = 0.15; // between cells of one node
const PAD = 0.3; // inside a node box
const NODE_GAP = 0.6; // between node boxes; room for the node's label above it

export function geometry(world, gpusPerNode, widthPx, maxHeightPx, maxCellPx) {
  const perNode = Math.max(1, Math.min(gpusPerNode, world));
  const nodes = Math.ceil(world / gpusPerNode);
  const rowsIn = perNode <= 4 ? 1 : perNode <= 16 ? 2 : Math.ceil(Math.sqrt(perNode));
  const colsIn = Math.ceil(perNode / rowsIn);
  const nodeW = colsIn + (colsIn - 1) * GAP + 2 * PAD;
  const nodeH = rowsIn + (rowsIn - 1) * GAP + 2 * PAD;
  // Try every count of node columns; keep the one that draws cells biggest.
  let best = null;
  for (let cols = 1; cols <= nodes; cols += 1) {
    const rows = Math.ceil(nodes / cols);
    const w = cols * nodeW + (cols - 1) * NODE_GAP;
    const h = rows * (nodeH + NODE_GAP);
    const scale = Math.min((widthPx - 2) / w, maxHeightPx / h, maxCellPx);
    if (!best || scale > best.scale + 1e-9) best = { cols, rows, w, h, scale };
  }
  return {
    world, gpusPerNode, nodes, rowsIn, colsIn, nodeW, nodeH, ...best,
    heightPx: Math.ceil(best.h * best.scale) + 2,
  };
}

// Top-left corner of node n's box, in units.
export function nodeOrigin(g, n) {
  const col = n % g.cols;
  const row = Math.floor(n / g.cols);
  return [col * (g.nodeW + NODE_GAP), NODE_GAP + row * (g.nodeH + NODE_GAP)];
}

// Top-left corner of rank r's cell, in units.
export function cellOrigin(g, r) {
  const n = Math.floor(r / g.gpusPerNode);
  const i = r % g.gpusPerNode;
  const [x, y] = nodeOrigin(g, n);
  const cx = i % g.colsIn;
  const cy = Math.floor(i / g.colsIn);
  return [x + PAD + cx * (1 + GAP), y + PAD + cy * (1 + GAP)];
}

// The node box and cell under a point in units: {node, rank} (rank null between cells).
export function hit(g, ux, uy) {
  const col = Math.floor(ux / (g.nodeW + NODE_GAP));
  const row = Math.floor((uy - NODE_GAP) / (g.nodeH + NODE_GAP));
  if (col < 0 || col >= g.cols || row < 0) return null;
  const node = row * g.cols + col;
  if (node >= g.nodes) return null;
  const [x, y] = nodeOrigin(g, node);
  if (ux < x || ux > x + g.nodeW || uy < y || uy > y + g.nodeH) return null;
  const cx = Math.floor((ux - x - PAD) / (1 + GAP));
  const cy = Math.floor((uy - y - PAD) / (1 + GAP));
  let rank = null;
  if (cx >= 0 && cx < g.colsIn && cy >= 0 && cy < g.rowsIn) {
    const r = node * g.gpusPerNode + cy * g.colsIn + cx;
    if (r < g.world && cy * g.colsIn + cx < g.gpusPerNode) rank = r;
  }
  return { node, rank };
}
