# frozen_string_literal: true

require_relative 'creations'
require_relative 'one_by_one'

module PuppetX
  module CloneArmy
    # The clone provider's batched work, gathered during a Puppet run and
    # done with one helper call per kind, so that 500 clones cost four
    # helper calls (and three daemon-reloads), not 2000: a daemon-reload
    # costs more the more units systemd has, so one per clone grows a fleet
    # in O(N²).
    #
    # Lifecycle in one run, as Puppet drives the clone_army_clone provider:
    #
    # - prefetch: once, before any clone resource; one `clone list` gives
    #   every resource its provider.
    # - the first resource's create: every new clone of the run is made with
    #   one `clone create-many` (#creations, PuppetX::CloneArmy::Creations),
    #   each resource's create taking its own outcome, so that a clone that
    #   cannot be made fails its resource.
    # - each resource's create, destroy or flush: what can be done at once is
    #   (`clone configure`); what should go together is queued here: a new
    #   clone to start, a running clone to restart (a changed run mode,
    #   interval, certname or apply source is read only at boot), a clone to
    #   remove.
    # - the clone_army_fleet resource, which requires every clone (or, in a
    #   run without one, post_resource_eval, once after every clone
    #   resource): #run empties the batch in this order: one `clone remove` of
    #   the removals (and of the clones made ahead for resources Puppet did
    #   not apply), one `clone stop` of the clones to restart, then one
    #   `clone start --ramp-up N` of the new and the restarted clones, N the
    #   largest ramp_up asked for. The helper spreads the starts over N
    #   seconds in waves; this side plans nothing.
    #
    # A call that fails is made again for each clone on its own
    # (PuppetX::CloneArmy::OneByOne), so each failure is known by the clone
    # that failed. The retries of a start with a ramp-up keep its pace (one
    # clone every ramp_up / N seconds) and say so.
    #
    # The queued providers are duck-typed: #name, #state, #helper and
    # #update_from(answered_clones).
    class Batch
      # [provider, ramp_up] pairs.
      attr_reader :starts, :restarts
      # Providers.
      attr_reader :removals
      # The clones made in this run.
      attr_reader :creations

      # `pause` sleeps the seconds it is given (the specs pass one that only
      # records them).
      def initialize(pause: ->(seconds) { sleep(seconds) })
        @pause = pause
        @creations = Creations.new
        @starts = []
        @restarts = []
        @removals = []
      end

      # Queues a clone to be started (once) after the run.
      def start(provider, ramp_up)
        @starts << [provider, ramp_up.to_i] unless queued?(@starts.map(&:first), provider)
      end

      # Queues a running clone to be stopped and started (once) after the run.
      def restart(provider, ramp_up)
        @restarts << [provider, ramp_up.to_i] unless restarting?(provider)
      end

      def restarting?(provider)
        queued?(@restarts.map(&:first), provider)
      end

      # Queues a clone to be removed (once) after the run.
      def remove(provider)
        @removals << provider unless queued?(@removals, provider)
      end

      def empty?
        @starts.empty? && @restarts.empty? && @removals.empty? && @creations.unclaimed.empty?
      end

      # What is queued, in words ("removed clone4; restarted clone1; started
      # clone2, clone3 over 30 s").
      def summary
        over = ramp_up_text
        [
          ['removed', @removals + @creations.unclaimed, ''],
          ['restarted', @restarts.map(&:first), over],
          ['started', @starts.map(&:first), over],
        ].reject { |_, providers, _| providers.empty? }
          .map { |verb, providers, tail| "#{verb} #{providers.map(&:name).join(', ')}#{tail}" }
          .join('; ')
      end

      # Does the queued work and empties the batch. Returns the Failures.
      def run
        @creations.take_unclaimed.each { |provider| remove(provider) }
        failures = run_removals
        restarts = @restarts.dup
        starts = @starts.dup
        @restarts.clear
        @starts.clear
        failures += stop(restarts.map(&:first)) unless restarts.empty?
        starting = startable(starts, restarts)
        failures += start_all(starting) unless starting.empty?
        failures
      end

      # Removes the queued clones now (a base about to be removed needs its
      # clones gone first). Returns the Failures.
      def run_removals
        removals = @removals.dup
        @removals.clear
        return [] if removals.empty?

        OneByOne.each(removals, 'remove') { |batch| batch.first.helper.clone_remove(*batch.map(&:name)) }
      end

      private

      # A clone whose stop failed is still running: it is not started.
      def startable(starts, restarts)
        starts + restarts.select { |provider, _| provider.state == :stopped }
      end

      def ramp_up_text
        ramp_up = (@starts + @restarts).map(&:last).max.to_i
        ramp_up.positive? ? " over #{ramp_up} s" : ''
      end

      # (Providers of one class are all == to each other: compare identities.)
      def queued?(providers, provider)
        providers.any? { |queued| queued.equal?(provider) }
      end

      def stop(providers)
        OneByOne.each(providers, 'restart') do |batch|
          stopped = batch.first.helper.clone_stop(*batch.map(&:name))
          batch.each { |provider| provider.update_from(stopped) }
        end
      end

      def start_all(pairs)
        ramp_up = pairs.map(&:last).max
        providers = pairs.map(&:first)
        OneByOne.each(providers, 'start', pace: retry_pace(ramp_up, providers.size), pause: @pause) do |batch|
          # One clone on its own (a retry) has nothing to spread out; the
          # retries' pace keeps the ramp.
          started = batch.first.helper.clone_start(*batch.map(&:name), ramp_up: batch.size > 1 ? ramp_up : 0)
          batch.each { |provider| provider.update_from(started) }
        end
      end

      # The seconds between two retried starts: the ramp's own pace.
      def retry_pace(ramp_up, count)
        count > 1 ? ramp_up.to_f / count : 0
      end
    end
  end
end
