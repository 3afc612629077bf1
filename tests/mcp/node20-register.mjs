// `node --import ./node20-register.mjs ...`: installs node20-hooks.mjs before the program loads.
import { register } from 'node:module';

register('./node20-hooks.mjs', import.meta.url);
