# frozen_string_literal: true

# clone_army: how many clones this host holds for each run mode (the smaller of
# its memory and CPU bounds, and which one it is), and (once the clone-army
# helper is installed) its bases and clones. See
# PuppetX::CloneArmy::FleetFact for the shape and README.md ("Fleet size") for
# the formula.
require_relative '../puppet_x/clone_army/fleet_fact'

Facter.add(:clone_army) do
  confine kernel: 'Linux'

  setcode do
    memory = Facter.value(:memory)
    total_bytes = memory.is_a?(Hash) ? memory.dig('system', 'total_bytes') : nil
    processors = Facter.value(:processors)
    cores = processors.is_a?(Hash) ? processors['count'] : nil
    PuppetX::CloneArmy::FleetFact.value(total_bytes: total_bytes, cores: cores)
  end
end
