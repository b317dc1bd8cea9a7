import { SignJWT } from 'jose';
import { resolveJwtSecret } from '../src/auth/dev-secret';
import { KNOWN_SCOPES } from '../src/auth/order-access';
import { ConfigError, loadConfig } from '../src/config';
import { readCommandLine, usageError } from './command-line';

/** Prints an HS256 token that the server started with the same environment accepts. */

const usage = 'Usage: npm run token -- --sub <customer> [--scope orders:read:all] [--expires-in 1h]';
const { values } = readCommandLine(usage, {
  sub: { type: 'string' },
  scope: { type: 'string' },
  'expires-in': { type: 'string', default: '1h' },
});
if (!values.sub) usageError('--sub is required.', usage);

const unknownScopes = (values.scope ?? '')
  .split(' ')
  .filter((scope) => scope && !KNOWN_SCOPES.includes(scope));
if (unknownScopes.length > 0) {
  console.error(
    `Unknown scope ${unknownScopes.join(', ')}: the server knows ${KNOWN_SCOPES.join(', ')}. ` +
      'Without --scope a customer reads their own orders.',
  );
  process.exit(2);
}

try {
  const config = loadConfig();
  const secret = await resolveJwtSecret(config);
  if (!secret) {
    console.error('The server verifies tokens from a JWKS URL; ask your identity provider for a token.');
    process.exit(2);
  }
  let token = new SignJWT(values.scope ? { scope: values.scope } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(values.sub)
    .setIssuedAt()
    .setExpirationTime(values['expires-in'] ?? '1h');
  if (config.jwt.issuer) token = token.setIssuer(config.jwt.issuer);
  if (config.jwt.audience) token = token.setAudience(config.jwt.audience);
  console.log(await token.sign(new TextEncoder().encode(secret)));
} catch (error) {
  console.error(
    error instanceof ConfigError ? error.message : `Could not mint a token: ${(error as Error).message}`,
  );
  process.exit(2);
}
