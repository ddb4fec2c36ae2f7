// A throwaway certificate authority for tests that speak real HTTPS: a CA and a
// server certificate for localhost / 127.0.0.1 / ::1 signed by it, made with the
// openssl CLI. test/global-setup.ts creates one per run and points
// NODE_EXTRA_CA_CERTS at its CA, so processes started after that trust it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';

export interface TestTls {
  dir: string;
  caCert: string;
  caKey: string;
  /** The CA plus the certificates of the file given to createTestTls: the value for NODE_EXTRA_CA_CERTS. */
  caBundle: string;
  serverCert: string;
  serverKey: string;
}

const openssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

export function testTlsPaths(dir = process.env.LPM_TEST_TLS_DIR): TestTls {
  if (!dir) throw new Error('LPM_TEST_TLS_DIR is not set: run the tests through jest (test/global-setup.ts)');
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    caBundle: join(dir, 'ca-bundle.pem'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
  };
}

/**
 * Creates a new CA and a server certificate signed by it in `dir` (created if
 * missing). `keepExtraCa`, the NODE_EXTRA_CA_CERTS already set, if any, goes into
 * the bundle too, so that setting the bundle as NODE_EXTRA_CA_CERTS loses nothing.
 */
export function createTestTls(dir: string, keepExtraCa?: string): TestTls {
  mkdirSync(dir, { recursive: true });
  const p = testTlsPaths(dir);
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    dir,
    'req',
    '-x509',
    ...key,
    '-keyout',
    p.caKey,
    '-out',
    p.caCert,
    '-days',
    '7',
    '-subj',
    '/CN=LPM Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const csr = join(dir, 'server.csr');
  const ext = join(dir, 'server.ext');
  writeFileSync(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
    ].join('\n'),
  );
  openssl(dir, 'req', ...key, '-keyout', p.serverKey, '-out', csr, '-subj', '/CN=localhost');
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    p.caCert,
    '-CAkey',
    p.caKey,
    '-set_serial',
    `0x${Date.now().toString(16)}`,
    '-days',
    '7',
    '-extfile',
    ext,
    '-out',
    p.serverCert,
  );
  const kept = keepExtraCa && existsSync(keepExtraCa) ? readFileSync(keepExtraCa, 'utf8') : '';
  writeFileSync(p.caBundle, `${readFileSync(p.caCert, 'utf8')}\n${kept}`);
  return p;
}

/**
 * Makes this process trust the run's test CA. NODE_EXTRA_CA_CERTS covers the
 * Jest workers and every process the tests spawn (they start after global setup),
 * but Node reads it only at startup, so it misses the process that ran global
 * setup itself — where Jest runs the tests when it runs in band (one test file,
 * -i, or a few known-fast files). This adds the CA to the default store here,
 * which is what outgoing TLS without an explicit `ca` uses.
 */
export function trustTestCa(): void {
  const ca = readFileSync(testTlsPaths().caCert, 'utf8').trim();
  const current = getCACertificates('default');
  if (!current.some((c) => c.trim() === ca)) setDefaultCACertificates([...current, ca]);
}
