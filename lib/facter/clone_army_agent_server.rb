# frozen_string_literal: true

# clone_army_agent_server: the name this host's Puppet agent reaches its
# server by (PuppetX::CloneArmy::AgentDefaults.server), which class
# clone_army points the clones at when it is classified. Only resolved where
# Puppet is loaded (an agent run, `facter -p`).
require_relative '../puppet_x/clone_army/agent_defaults'

Facter.add(:clone_army_agent_server) do
  confine { defined?(Puppet.settings) }

  setcode do
    PuppetX::CloneArmy::AgentDefaults.server
  end
end
