# frozen_string_literal: true

# clone_army: how many clones this host's memory holds for each run mode, and
# (once the clone-army helper is installed) its bases and clones. See
# PuppetX::CloneArmy::FleetFact for the shape and README.md ("The clone_army
# fact") for the formula.
require_relative '../puppet_x/clone_army/fleet_fact'

Facter.add(:clone_army) do
  confine kernel: 'Linux'

  setcode do
    memory = Facter.value(:memory)
    total_bytes = memory.is_a?(Hash) ? memory.dig('system', 'total_bytes') : nil
    PuppetX::CloneArmy::FleetFact.value(total_bytes: total_bytes)
  end
end
