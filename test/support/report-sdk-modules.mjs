// `node --import ./test/support/report-sdk-modules.mjs …`: writes `SDK MODULE <url>` to stderr
// for every OpenTelemetry SDK, instrumentation or exporter module the process resolves.
import { register } from 'node:module';

register('./report-sdk-modules-hooks.mjs', import.meta.url);
