import process from 'node:process';

const SDK_MODULE = /@opentelemetry\/(?:sdk|instrumentation|exporter)|@envelop\/opentelemetry/;

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (SDK_MODULE.test(result.url)) process.stderr.write(`SDK MODULE ${result.url}\n`);
  return result;
}
