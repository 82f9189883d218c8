# frozen_string_literal: true

require_relative 'capacity'
require_relative 'helper'
require_relative 'twins'

module PuppetX
  module CloneArmy
    # The value of the `clone_army` fact (lib/facter/clone_army.rb):
    #
    #   {
    #     'capacity' => { 'daemon' => 225, 'timer' => 1080 },
    #     'capacity_bound' => { 'daemon' => 'memory', 'timer' => 'cpu' },
    #     'helper'   => '/usr/local/sbin/clone-army',         # only when installed
    #     'bases'    => ['debian-12'],
    #     'clones'   => { 'names' => ['clone1', 'clone2'],
    #                     'certnames' => { 'clone1' => 'clone1.load1.example.com', ... },
    #                     'total' => 2, 'running' => 1, 'stopped' => 1 },
    #     'twins'    => { 'total' => 1,                      # only after `twin import`
    #                     'nodes' => { 'web01.example.com' => { 'os_family' => 'Debian',
    #                                                           'role' => 'web',
    #                                                           'environment' => 'production' } },
    #                     'imported_from' => { 'facts_dir' => '/srv/estate' } },
    #   }
    #
    # `certnames` is how `clone-army report --puppetdb` finds every load host's clones
    # in PuppetDB, which holds this fact for each host: a clone's certname need not be
    # the default `<clone>.<host certname>`.
    #
    # `capacity` is the smaller of the memory and the CPU bound (Capacity.fleet)
    # at the default runinterval and CPU share, per run mode (`apply` and `manual`
    # clones cost memory as `timer` ones do); `capacity_bound` says which bound it
    # is. The class computes its own with its runinterval and cpu_share_percent.
    # It is computed in Ruby, so it exists on the very first run,
    # before the helper is installed. `bases` and `clones` come from one
    # `clone-army base list` and one `clone-army clone list` when the helper
    # is installed, and `twins` (PuppetX::CloneArmy::Twins.fact) from one
    # `clone-army twin list` once nodes were imported. When the helper fails they are left out and `error` says
    # why: a fact must not fail resolution, and the class must not take a
    # failed listing for "no clones".
    module FleetFact
      def self.value(total_bytes:, cores: nil, helper_path: nil)
        fact = {}
        fact.merge!(capacity(total_bytes, cores)) if total_bytes
        fact.merge(fleet(helper_path))
      end

      # `capacity` and `capacity_bound` (a host without a core count as
      # Capacity takes one).
      def self.capacity(total_bytes, cores)
        each = Capacity::MODES.to_h do |mode|
          [mode, Capacity.fleet(total_bytes: total_bytes, cores: cores, run_mode: mode)]
        end
        { 'capacity' => each.transform_values { |c| c['clones'] },
          'capacity_bound' => each.transform_values { |c| c['bound'] } }
      end

      # The bases and clones the helper at `helper_path` (or the default
      # place) lists; {} when it is not installed.
      def self.fleet(helper_path)
        helper = Helper.new(helper_path)
        return {} unless File.file?(helper.path) && File.executable?(helper.path)

        begin
          bases = helper.base_list
          clones = helper.clone_list
          twins = helper.twin_list
        rescue StandardError => e
          return { 'helper' => helper.path, 'error' => e.message }
        end
        fact = { 'helper' => helper.path, 'bases' => bases.map { |base| base['name'] }, 'clones' => clone_counts(clones) }
        fact['twins'] = Twins.fact(twins) unless twins['identities'].empty?
        fact
      end

      def self.clone_counts(clones)
        counts = {
          'names' => clones.map { |clone| clone['name'] },
          'certnames' => clones.select { |clone| clone['certname'] }.to_h { |clone| [clone['name'], clone['certname']] },
          'total' => clones.size,
        }
        Helper::CLONE_STATES.each do |state|
          counts[state] = clones.count { |clone| clone['state'] == state }
        end
        counts
      end
    end
  end
end
