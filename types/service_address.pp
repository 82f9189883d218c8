# @summary A Puppet Server or PuppetDB to ask, as the helper's `--server` and `--puppetdb` take it.
#
# An `https://` URL of a host (and port), or a host name or `host:port`,
# which the helper completes with the service's default port (8140 for
# Puppet Server, 8081 for PuppetDB). No path, spaces or quotes: the value
# goes into a systemd unit.
# The `clone_army::report` task's `server` and `puppetdb` take the same:
# PuppetX::CloneArmy::ServiceAddress holds its own check and the task's
# metadata to this pattern.
#
# @example
#   'https://puppetdb.example.com:8081'
#   'puppetdb.example.com'
type Clone_army::Service_address = Pattern[/\A(https:\/\/)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?\/?\z/]
