export { serveCommand } from './cli/serve.js';
