# frozen_string_literal: true

# clone_army_agent_server_port: the port this host's Puppet agent reaches its
# server on (PuppetX::CloneArmy::AgentDefaults.server_port), which class
# clone_army gives the clones with that server. Not set when it is Puppet's
# default, 8140. Only resolved where Puppet is loaded (an agent run,
# `facter -p`).
require_relative '../puppet_x/clone_army/agent_defaults'

Facter.add(:clone_army_agent_server_port) do
  confine { defined?(Puppet.settings) }

  setcode do
    PuppetX::CloneArmy::AgentDefaults.server_port
  end
end
