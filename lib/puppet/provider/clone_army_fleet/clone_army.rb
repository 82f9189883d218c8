# frozen_string_literal: true

Puppet::Type.type(:clone_army_fleet).provide(:clone_army) do
  desc <<-DOC
    Does the work clone_army_clone's provider queued in this run (its
    PuppetX::CloneArmy::Batch): removals, restarts and starts, one helper
    call each.
  DOC

  confine kernel: 'Linux'

  # What the last sync did, for the change's message.
  attr_reader :done

  def self.clones
    Puppet::Type.type(:clone_army_clone).provider(:clone_army)
  end

  def state
    self.class.clones.batch.empty? ? :settled : :pending
  end

  def state=(_value)
    batch = self.class.clones.batch
    @done = batch.summary
    failures = batch.run
    messages = self.class.clones.log_failures(failures)
    raise Puppet::Error, messages.join('; ') unless messages.empty?
  end
end
