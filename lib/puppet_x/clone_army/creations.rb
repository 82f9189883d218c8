# frozen_string_literal: true

require 'puppet'
require_relative 'one_by_one'
require_relative 'secrets'

module PuppetX
  module CloneArmy
    # The clones a Puppet run creates, made while Puppet evaluates their
    # resources, so that a clone that cannot be made fails its own resource
    # (a failed event, exit code 4 or 6, no "created"), and still with one
    # `clone create-many` (one daemon-reload) for them all: a daemon-reload
    # costs more the more units systemd has, so one per clone grows a fleet
    # in O(N²). A failure found only after Puppet has evaluated a resource
    # (in post_resource_eval, or in a later resource) reaches the log but
    # not that resource's event or the run's exit code.
    #
    # The first clone whose create Puppet calls is made together with every
    # clone of the catalog still to be created (the pending providers its
    # caller passes, as prefetch found them) whose base exists (one `base
    # list`); each of those takes its outcome when Puppet evaluates it, and
    # a failed one fails then. A clone made ahead whose create Puppet never
    # calls (a failed dependency, --tags, a schedule) is handed back by
    # #take_unclaimed to be removed at the end of the run, so that the run
    # leaves no clone it did not apply.
    #
    # A clone whose base the list lacks is not made ahead: its base may be
    # built later in the run. Its own create lists the bases again and fails
    # when its base is still missing, before any helper call that writes.
    #
    # The providers are duck-typed: #name, #helper, #base_to_create,
    # #create_files and #create_request(paths).
    class Creations
      def initialize
        # Every provider tried in this run => the clones the helper answered
        # with for it (a list holding it), or its Puppet::Error.
        @outcomes = {}.compare_by_identity
        @claimed = {}.compare_by_identity
      end

      # Makes `provider`'s clone, with those of `pending` not tried yet, unless
      # that was done already; returns the helper's answer that holds it, or
      # raises its failure.
      def create(provider, pending)
        make(provider, pending) unless @outcomes.key?(provider)
        @claimed[provider] = true
        outcome = @outcomes.fetch(provider)
        raise outcome if outcome.is_a?(Exception)

        outcome
      end

      # The providers whose clone was made ahead and never claimed.
      def unclaimed
        @outcomes.reject { |provider, outcome| @claimed.key?(provider) || outcome.is_a?(Exception) }.keys
      end

      # #unclaimed, and forgets the run.
      def take_unclaimed
        providers = unclaimed
        @outcomes.clear
        @claimed.clear
        providers
      end

      private

      def make(provider, pending)
        bases = provider.helper.base_list.map { |base| base['name'] }
        unless bases.include?(provider.base_to_create)
          @outcomes[provider] = missing_base(provider, bases)
          return
        end

        failures = OneByOne.each([provider] + joining(provider, pending, bases), 'create') do |some|
          answered = create_many(some)
          some.each { |made| @outcomes[made] = answered }
        end
        failures.each { |failure| @outcomes[failure.provider] = failure.error }
      end

      # The clones of `pending` made with `provider`'s: not tried yet in this
      # run, of the same helper, their base among `bases`.
      def joining(provider, pending, bases)
        pending.reject do |other|
          other.equal?(provider) || @outcomes.key?(other) || other.helper.path != provider.helper.path ||
            !bases.include?(other.base_to_create)
        end
      end

      def missing_base(provider, bases)
        known = bases.empty? ? 'there is none' : "there are #{bases.join(', ')}"
        Puppet::Error.new("cannot create clone #{provider.name}: base #{provider.base_to_create.to_s.inspect} does not " \
                          "exist (#{known}; a clone_army_base resource of that name builds it)")
      end

      # The files every clone's create names are written at once (one private
      # directory, removed after the call), so the whole batch is one call.
      def create_many(providers)
        files = providers.map(&:create_files).reduce({}, :merge)
        Secrets.with_files(files) do |paths|
          requests = providers.to_h { |provider| [provider.name, provider.create_request(paths)] }
          providers.first.helper.clone_create_many(requests)
        end
      end
    end
  end
end
