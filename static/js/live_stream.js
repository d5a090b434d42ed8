// The run's live feed: reconnects with backoff, and never calls a stream with a hole complete.
// Each message is a JSON array of frames: hello {seq}, batch {from, to, items}, gap {...}.
// After every hello (first connect and each reconnect) and after every gap or sequence hole
// the page refetches the run over HTTP (onResync); items up to hello.seq are already in it.

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10000;

export class LiveStream {
  constructor(run, { onItems, onResync, onState }) {
    this.run = run;
    this.onItems = onItems;
    this.onResync = onResync;
    this.onState = onState;
    this.backoff = MIN_BACKOFF_MS;
    this.lastSeq = 0;
    this.stopped = false;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/ws/runs/${encodeURIComponent(this.run)}`;
  }

  start() {
    this.onState("connecting", false);
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onmessage = (ev) => this.receive(JSON.parse(ev.data));
    ws.onopen = () => { this.backoff = MIN_BACKOFF_MS; };
    ws.onclose = () => this.retry();
    ws.onerror = () => ws.close();
  }

  retry() {
    if (this.stopped) return;
    this.onState("reconnecting", false);
    const wait = this.backoff * (0.75 + Math.random() * 0.5); // jitter: viewers do not stampede
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    setTimeout(() => this.start(), wait);
  }

  receive(frames) {
    for (const f of frames) {
      if (f.type === "hello") {
        this.lastSeq = f.seq;
        this.resync();
      } else if (f.type === "gap") {
        this.resync();
      } else if (f.type === "batch") {
        if (f.from > this.lastSeq + 1) this.resync(); // a hole nobody announced
        this.lastSeq = Math.max(this.lastSeq, f.to);
        this.onItems(f.items);
      }
    }
  }

  // Refetch what we may have missed; "complete" again only once that fetch has landed.
  async resync() {
    this.onState("resync", false);
    const token = (this.token = (this.token ?? 0) + 1);
    try {
      await this.onResync();
      if (token === this.token && this.ws?.readyState === WebSocket.OPEN) this.onState("live", true);
    } catch (err) {
      if (token === this.token) setTimeout(() => this.resync(), 1000);
    }
  }
}
