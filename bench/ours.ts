/**
 * Our server exactly as `npm start` runs it (scripts/start.ts), plus one thing for the bench: when the
 * orchestrator's stdin pipe closes (it finished or died), send ourselves SIGTERM, which src/main.ts
 * answers with its graceful shutdown (and, under --cpu-prof, Node then writes the profile).
 */
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.resume();
await import('../scripts/start');
export {};
