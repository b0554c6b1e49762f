export {
  DEFAULT_TOKEN,
  type FakeGitHub,
  type FakeGitHubOptions,
  type Permission,
  type PullSnapshot,
  type RecordedRequest,
  type StatusSnapshot,
  startFakeGitHub,
  type TokenGrant,
} from './server.js';
