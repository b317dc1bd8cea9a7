/**
 * The Response class Yoga itself builds answers with (whatwg-node's Node.js ponyfill). Its server
 * adapter writes such a response's string body to the socket in one call; a global (undici)
 * Response it can only read back through a web stream, which cost ~0.1 ms per request.
 */
export { Response } from '@whatwg-node/fetch';
