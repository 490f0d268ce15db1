// `sgq/sandbox`: the local stand-in of the service, to start on a port in a test suite.
export { startSandbox, DEMO_KEY, EXPIRED_KEY, LOW_KEY, type Sandbox, type SandboxOptions, type Faults } from './server.js';
