# @summary Where class clone_army fetches the `clone-army` helper from, instead of the module's `files/`.
#
# An `http://` or `https://` URL (a host, then an optional path; no spaces),
# or an absolute path on the load host (a file that is already there, e.g.
# on a shared mount). Puppet's own `file`
# resource fetches it and verifies it against `helper_checksum` (sha256), so
# the integrity comes from the checksum, not from the transport.
#
# @example
#   'https://artifacts.example.com/clone-army/0.4.0/clone-army-0.4.0-x86_64-linux'
#   '/srv/share/clone-army-0.4.0-x86_64-linux'
type Clone_army::Helper_source = Variant[Pattern[/\Ahttps?:\/\/[^\/\s]+(\/\S*)?\z/], Clone_army::Absolutepath]
