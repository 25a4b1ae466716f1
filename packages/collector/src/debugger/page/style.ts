/** The live debugger's stylesheet, inline (no second request), allowed by its hash in the CSP. */
export const STYLE = `
  :root { font: 14px/1.4 system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
  body { margin: 0 auto; padding: 1rem 1.5rem; max-width: 90rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
  h2 { font-size: 1rem; margin: 1rem 0 .4rem; }
  #state { font-size: .85rem; color: #5b6470; margin: 0 0 .75rem; }
  #state[data-state="open"]::before { content: "\\25CF "; color: #1a7f37; }
  #state[data-state="closed"]::before { content: "\\25CF "; color: #b42318; }
  #state[data-state="paused"]::before { content: "\\25CF "; color: #b54708; }
  form#filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0 0 .75rem; }
  form#filters label { display: flex; flex-direction: column; font-size: .75rem; color: #5b6470; }
  input, select, button { font: inherit; padding: .25rem .4rem; }
  button { cursor: pointer; }
  table { width: 100%; border-collapse: collapse; background: #fff; box-shadow: 0 1px 2px #0002; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
  th { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: #5b6470; }
  #events tr { cursor: pointer; }
  #events tr:focus { outline: 2px solid #2563eb; outline-offset: -2px; }
  td.time { white-space: nowrap; font-variant-numeric: tabular-nums; color: #5b6470; }
  td.num { font-variant-numeric: tabular-nums; text-align: right; }
  code, pre { font: 12px ui-monospace, monospace; }
  .type { font-weight: 600; }
  .origin { font-size: .75rem; color: #5b6470; }
  .off { color: #8a6d00; }
  .webhook { display: block; margin: 0 0 .2rem; }
  .badge { display: inline-block; min-width: 5.5rem; padding: 0 .4rem; border-radius: .6rem; font-size: .75rem; text-align: center; color: #fff; background: #6b7280; }
  .badge[data-status="delivered"] { background: #1a7f37; }
  .badge[data-status="retrying"] { background: #b54708; }
  .badge[data-status="failed"] { background: #b42318; }
  .badge[data-status="skipped"], .badge[data-status="filtered"] { background: #9aa3ad; }
  .note { display: block; font-size: .75rem; color: #5b6470; overflow-wrap: anywhere; }
  .scroll { overflow-x: auto; }
  pre { margin: .25rem 0 0; overflow: auto; white-space: pre-wrap; word-break: break-all; background: #f6f7f9; padding: .4rem; }
  #empty td, #no-match { text-align: center; color: #5b6470; padding: 2rem; }
  #no-match { margin: 0; background: #fff; }
  /* Room for the whole placeholder, as far as the window allows. */
  form#filters input[name="q"] { width: 42ch; max-width: calc(100vw - 3rem); box-sizing: border-box; }
  /* The attempts fit the panel: long URLs and errors wrap instead of pushing the Error column out. */
  #detail table.attempts { table-layout: fixed; }
  #detail table.attempts td, #detail table.attempts th { overflow-wrap: anywhere; padding: .3rem .4rem; }
  #detail table.attempts th:nth-child(1) { width: 5.5rem; }
  #detail table.attempts th:nth-child(3) { width: 4.5rem; }
  #detail table.attempts th:nth-child(4), #detail table.attempts th:nth-child(5) { width: 4.5rem; }
  #detail { position: fixed; inset: 0 0 0 auto; width: min(44rem, 100vw); overflow: auto; background: #fff; box-shadow: -2px 0 8px #0003; padding: 1rem 1.25rem; box-sizing: border-box; }
  #detail header { display: flex; justify-content: space-between; gap: .5rem; align-items: center; }
  .counters { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; margin: 0 0 1rem; }
  @media (max-width: 40rem) {
    body { padding: .5rem; }
    #log td:nth-child(4), #log th:nth-child(4) { display: none; }
  }
`;
