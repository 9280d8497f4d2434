/**
 * Control-mode streams recorded from tmux 3.3a (a `tmux -C attach-session -f …` client's
 * stdout, byte for byte), base64-encoded so the bytes survive any editor.
 */

/** Commands (ok, error, multi-command, empty line, %pause/%continue inside replies, save-buffer - writing outside any block) and topology, session, mode and subscription notifications, ending in %exit. */
export const RECORDED_EVENTS: Buffer = Buffer.from(
  [
    'JWJlZ2luIDE3OTYyMTc4OTQgMjY0IDAKJWVuZCAxNzk2MjE3ODk0IDI2NCAwCiVzZXNzaW9uLWNoYW5nZWQgJDAgbWFpbgolYmVn',
    'aW4gMTc5NjIxNzg5NCAyNjkgMQptYWluIMOpIPCfmIAKJWVuZCAxNzk2MjE3ODk0IDI2OSAxCiViZWdpbiAxNzk2MjE3ODk0IDI3',
    'MCAxCkAwIHNoCiVlbmQgMTc5NjIxNzg5NCAyNzAgMQolYmVnaW4gMTc5NjIxNzg5NCAyNzEgMQpjYW4ndCBmaW5kIHBhbmU6ICU5',
    'OTkKJWVycm9yIDE3OTYyMTc4OTQgMjcxIDEKJWJlZ2luIDE3OTYyMTc4OTQgMjcyIDEKYQolZW5kIDE3OTYyMTc4OTQgMjcyIDEK',
    'JWJlZ2luIDE3OTYyMTc4OTQgMjczIDEKYgolZW5kIDE3OTYyMTc4OTQgMjczIDEKJWJlZ2luIDE3OTYyMTc4OTUgMjc0IDEKJWVu',
    'ZCAxNzk2MjE3ODk1IDI3NCAxCiViZWdpbiAxNzk2MjE3ODk1IDI3NSAxCgolZW5kIDE3OTYyMTc4OTUgMjc1IDEKJXdpbmRvdy1h',
    'ZGQgQDEKJXdpbmRvdy1yZW5hbWVkIEAxIHJlbmFtZWQgw6kKJWxheW91dC1jaGFuZ2UgQDEgNDE5YSw4MHgyNCwwLDBbODB4MTIs',
    'MCwwLDEsODB4MTEsMCwxMywyXSA0MTlhLDgweDI0LDAsMFs4MHgxMiwwLDAsMSw4MHgxMSwwLDEzLDJdIAold2luZG93LXBhbmUt',
    'Y2hhbmdlZCBAMSAlMgoldW5saW5rZWQtd2luZG93LWNsb3NlIEAxCiV1bmxpbmtlZC13aW5kb3ctYWRkIEAyCiVzZXNzaW9ucy1j',
    'aGFuZ2VkCiVzZXNzaW9uLXJlbmFtZWQgJDEgYXV0cmUKJXVubGlua2VkLXdpbmRvdy1hZGQgQDMKJXVubGlua2VkLXdpbmRvdy1y',
    'ZW5hbWVkIEAzIGZhcgolcGFuZS1tb2RlLWNoYW5nZWQgJTAKJXdpbmRvdy1yZW5hbWVkIEAwIFt0bXV4XQolcGFuZS1tb2RlLWNo',
    'YW5nZWQgJTAKJWJlZ2luIDE3OTYyMTc4OTggMzExIDEKJXBhdXNlICUwCiVlbmQgMTc5NjIxNzg5OCAzMTEgMQold2luZG93LXJl',
    'bmFtZWQgQDAgc2gKJWJlZ2luIDE3OTYyMTc4OTggMzEzIDEKJWNvbnRpbnVlICUwCiVlbmQgMTc5NjIxNzg5OCAzMTMgMQolYmVn',
    'aW4gMTc5NjIxNzg5OCAzMTQgMQolZW5kIDE3OTYyMTc4OTggMzE0IDEKJXN1YnNjcmlwdGlvbi1jaGFuZ2VkIGNtZCAkMCBAMCAw',
    'ICUwIDogc2gKJWJlZ2luIDE3OTYyMTc4OTkgMzE1IDEKbm8gYnVmZmVyIG5vc3VjaAolZXJyb3IgMTc5NjIxNzg5OSAzMTUgMQol',
    'YmVnaW4gMTc5NjIxNzkwMCAzMTYgMQolZW5kIDE3OTYyMTc5MDAgMzE2IDEKJWJlZ2luIDE3OTYyMTc5MDAgMzE3IDEKJWVuZCAx',
    'Nzk2MjE3OTAwIDMxNyAxCi06IEJhZCBmaWxlIGRlc2NyaXB0b3IKJXNlc3Npb25zLWNoYW5nZWQKJXVubGlua2VkLXdpbmRvdy1j',
    'bG9zZSBAMgoldW5saW5rZWQtd2luZG93LWNsb3NlIEAzCiVleGl0Cg==',
  ].join(''),
  'base64',
);

/** %output with escaped control bytes, a raw 0xff and UTF-8, then %extended-output after pause-after was set. */
export const RECORDED_OUTPUT: Buffer = Buffer.from(
  [
    'JWJlZ2luIDE3OTYyMTc5MDEgMzI0IDAKJWVuZCAxNzk2MjE3OTAxIDMyNCAwCiVzZXNzaW9uLWNoYW5nZWQgJDAgbWFpbgolb3V0',
    'cHV0ICUwIHByaW50ZiAnXDEzNDAwMVwxMzQwMDIgdGFiOlwxMzR0IGJzOlwxMzRcMTM0IMOpIPCfmIAgXDEzNDM3N1wxMzRuJwol',
    'b3V0cHV0ICUwIFwwMTVcMDEyXDAwMVwwMDIgdGFiOlwwMTEgYnM6XDEzNCDDqSDwn5iAIP9cMDE1XDAxMiMgCiViZWdpbiAxNzk2',
    'MjE3OTAyIDMzMiAxCiVlbmQgMTc5NjIxNzkwMiAzMzIgMQolZXh0ZW5kZWQtb3V0cHV0ICUwIDAgOiBlY2hvIGV4dGVuZGVkCiVl',
    'eHRlbmRlZC1vdXRwdXQgJTAgMCA6IFwwMTVcMDEyCiVleHRlbmRlZC1vdXRwdXQgJTAgMCA6IGV4dGVuZGVkXDAxNVwwMTIKJWV4',
    'dGVuZGVkLW91dHB1dCAlMCAwIDogIyAKJWV4aXQK',
  ].join(''),
  'base64',
);
