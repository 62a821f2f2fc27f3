// The web UI must be built before tests serve it (npm test builds it; a single test file run may not have).
import { execFileSync } from 'node:child_process';
import { webUiFolder } from '../../src/plugins/web-ui.js';

export function ensureUiBuilt(): void {
  if (!webUiFolder()) execFileSync('npm', ['run', '--silent', 'build:ui'], { stdio: 'inherit' });
}
