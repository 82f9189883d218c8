# @summary A host name, as used for a clone's `server` and `certname`.
#
# Labels of letters, digits and `-` (1 to 63 characters, not starting or
# ending with `-`), separated by `.`, at most 253 characters in all.
#
# @example
#   'puppet.example.com', 'clone1.loadhost.example.com'
type Clone_army::Hostname = Pattern[/\A(?=.{1,253}\z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\z/]
