// Module resolve hook: the conformance package's imports of "fs" get node20-fs-shim.mjs instead.
export async function resolve(specifier, context, next) {
  const fromConformance = context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/');
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: new URL('./node20-fs-shim.mjs', import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
