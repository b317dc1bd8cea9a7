import { CHROMIUM_PACKAGE, chromiumMissingMessage, findChromium } from '../test/support/chromium';
import { aptInstall } from './apt-install';

/**
 * `npm test`'s second step: the browser suite (GraphiQL as a live-orders client) drives Debian's
 * Chromium. When it is missing, install the package with apt-get as ensure-redis does; when that
 * cannot be done, say in one line what to install, and fail.
 */

if (findChromium()) process.exit(0);

const failure = aptInstall(CHROMIUM_PACKAGE, 'the browser tests');
if (failure) {
  console.error(chromiumMissingMessage(failure));
  process.exit(1);
}
if (!findChromium()) {
  console.error(chromiumMissingMessage(`apt-get's ${CHROMIUM_PACKAGE} did not put it there`));
  process.exit(1);
}
