/** The private and special addresses a webhook URL must not reach (issue acceptance, decisions §5). */
export const PRIVATE_URLS = [
  'https://127.0.0.1/hook',
  'https://10.0.0.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://[::1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:7f00:1]/hook',
  'https://100.64.0.1/hook',
  'https://0.0.0.0/hook',
  'https://[1::ffff:7f00:1]/hook',
  'https://[3fff::1]/hook',
  'https://[5f00::1]/hook',
];
