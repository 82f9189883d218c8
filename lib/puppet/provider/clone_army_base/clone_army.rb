# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/helper'

Puppet::Type.type(:clone_army_base).provide(:clone_army) do
  desc <<-DOC
    Manages base images with the `clone-army` helper. All bases are read with
    one `clone-army base list` per run (prefetch).
  DOC

  confine kernel: 'Linux'

  mk_resource_methods

  # What this provider keeps of one entry of `base list`.
  def self.from_helper(base)
    {
      name: base['name'],
      ensure: :present,
      os: base['os'],
      release: base['release'],
      puppet_source: base['puppet_source'],
      clones: Array(base['clones']),
    }
  end

  def self.instances
    PuppetX::CloneArmy::Helper.new.base_list.map { |base| new(from_helper(base)) }
  end

  def self.prefetch(resources)
    bases = PuppetX::CloneArmy::Helper.listing_for_preview(resources, :base_list)
    bases.each do |base|
      resource = resources[base['name']]
      resource.provider = new(from_helper(base)) if resource
    end
  end

  def exists?
    @property_hash[:ensure] == :present
  end

  # A build runs the OS's installer for a minute or more: say so before it
  # starts and how long it took, so a run that seems to hang is explained.
  # What the installer printed is kept in a build log, which a failure names.
  def create
    resource.notice('building the base image: the OS installer runs now, usually for some minutes')
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    base = helper.base_create(name, os: resource[:os], release: resource[:release], mirror: resource[:mirror],
                                    puppet_source: resource[:puppet_source], server: resource[:server],
                                    pe_ca_cert: resource[:pe_ca_cert])
    resource.notice(format('base image built in %<seconds>d s', seconds: Process.clock_gettime(Process::CLOCK_MONOTONIC) - started))
    @property_hash = self.class.from_helper(base)
  end

  # Clones removed in the same run wait in clone_army_clone's queue until
  # all clones are evaluated (one batch); they go first, so that the base is
  # no longer in use.
  def destroy
    clones = Puppet::Type.type(:clone_army_clone).provider(:clone_army)
    failures = clones.flush_removals
    raise Puppet::Error, "cannot remove base #{name}: #{failures.join('; ')}" unless failures.empty?

    helper.base_remove(name)
    @property_hash = { name: name, ensure: :absent }
  end

  private

  def helper
    @helper ||= PuppetX::CloneArmy::Helper.new(resource && resource[:helper])
  end
end
