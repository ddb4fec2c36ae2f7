// `npm run admin`: the operator CLI (gateway/src/cli/main.ts) on this machine.
// Without MONGO_URL it works on the local document store of `npm start`, started
// for the command's duration when it is not running.
import { runCli } from '../gateway/src/cli/main.ts';
import { localStoreForCommand } from './local-store.ts';

process.exit(await runCli(process.argv.slice(2), () => localStoreForCommand()));
