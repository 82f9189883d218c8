# @summary Where the Puppet agent in a base image comes from.
#
# * `distro`: the distribution's own `puppet-agent` package.
# * `puppet`: Puppet's official repositories.
# * `openvox`: OpenVox's official repositories.
# * `pe`: Puppet Enterprise, from the primary server's `/packages/current/`.
#
# See the class parameter `puppet_source` for the default and its rules.
#
# @example
#   'distro'
type Clone_army::Puppet_source = Enum['distro', 'puppet', 'openvox', 'pe']
