// The release this process runs: the version of package.json, read once (from src/ or dist/ alike).
import { readFileSync } from 'node:fs';

/** package.json sits one folder above both src/ and dist/, and beside dist/ in the container image. */
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = packageJson.version;
