import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The checkout (or image) this compiled file belongs to: the nearest directory above it holding a `package.json`,
 * whatever out dir it was compiled to. Where `npm start` runs, so what `npx herald` must find from any directory.
 */
function findPackageRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return path.resolve(__dirname, '..', '..');
}

export const packageRoot = findPackageRoot();
