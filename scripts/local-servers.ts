// Starts the shared RabbitMQ and Redis servers when they are down, and gives each
// test run its own vhost, key prefix and databases so runs leave nothing behind.
import { execFileSync, execSync } from 'node:child_process';
import { isListening } from './local-store.ts';

async function waitFor(port: number, seconds: number): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await isListening(port))) {
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${seconds} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Starts RabbitMQ when nothing listens on 5672; true when this call started it. */
export async function ensureRabbitmq(): Promise<boolean> {
  if (await isListening(5672)) return false;
  execSync('rabbitmq-server -detached', { stdio: 'ignore' });
  await waitFor(5672, 60);
  execFileSync('rabbitmqctl', ['await_startup'], { stdio: 'ignore' });
  return true;
}

/** Starts Redis when nothing listens on 6379; true when this call started it. */
export async function ensureRedis(): Promise<boolean> {
  if (await isListening(6379)) return false;
  execSync(
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
    { stdio: 'ignore' },
  );
  await waitFor(6379, 20);
  return true;
}

export function stopRabbitmq(): void {
  execFileSync('rabbitmqctl', ['stop'], { stdio: 'ignore' });
}

export function stopRedis(): void {
  execFileSync('redis-cli', ['-p', '6379', 'shutdown', 'nosave'], { stdio: 'ignore' });
}

export function addVhost(vhost: string): void {
  execFileSync('rabbitmqctl', ['add_vhost', vhost], { stdio: 'ignore' });
  execFileSync('rabbitmqctl', ['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*'], { stdio: 'ignore' });
}

export function deleteVhost(vhost: string): void {
  execFileSync('rabbitmqctl', ['delete_vhost', vhost], { stdio: 'ignore' });
}
