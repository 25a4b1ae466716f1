/** The sign-in page's stylesheet, inline, allowed by its hash in the CSP. */
export const SIGN_IN_STYLE = `
  :root { font: 14px/1.4 system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
  main { margin: 4rem auto; padding: 1.5rem; max-width: 28rem; background: #fff; box-shadow: 0 1px 2px #0002; }
  h1 { font-size: 1.25rem; margin: 0 0 .5rem; }
  form { display: flex; gap: .5rem; align-items: end; flex-wrap: wrap; }
  label { display: flex; flex-direction: column; flex: 1; font-size: .75rem; color: #5b6470; }
  input, button { font: inherit; padding: .3rem .5rem; }
  #sign-in-error { color: #b42318; }
`;
