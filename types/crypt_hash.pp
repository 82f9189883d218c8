# @summary A crypt(3) password hash, as in `/etc/shadow`.
#
# MD5 (`$1$`), bcrypt (`$2a$`, `$2b$`, `$2x$`, `$2y$`), SHA-256 (`$5$`),
# SHA-512 (`$6$`), scrypt (`$7$`), yescrypt (`$y$`, Debian's default) and
# gost-yescrypt (`$gy$`). Make one with `mkpasswd -m yescrypt` or
# `openssl passwd -6`. A locked password (`!`, `*`) is not a hash. Printable
# ASCII only, no `:` (the field separator of
# `/etc/shadow`): the helper's rule, in its schema's `crypt_hash`.
#
# @example
#   '$6$saltsalt$Pn0Bxv7N0n9w1QFbfpWKVHqVtb2Ag5BKJqQEo8B4mX6Q0c9B5xjdQ8Gl7BvCfIoVi/3HMW1vDGSJpnDzVcmQf.'
type Clone_army::Crypt_hash = Pattern[/\A\$(1|2a|2b|2x|2y|5|6|7|y|gy)\$[!-9;-~]+\$[.\/0-9A-Za-z]+\z/]
