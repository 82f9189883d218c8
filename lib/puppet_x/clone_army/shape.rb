# frozen_string_literal: true

require 'json'
require_relative 'schema'

module PuppetX
  module CloneArmy
    # A clone's load shape: its run mode, schedule, limits and facts
    # (docs/PROTOCOL.md, "Load shape"). The values the helper accepts are
    # checked here too, so a bad one fails when the catalog is built with a
    # message naming the attribute, and the forms the helper reads back are
    # compared by what they mean ('1G' is '1024M').
    module Shape
      # The shape properties of clone_army_clone, in the order their flags
      # are passed to `clone create` / `clone configure`.
      PROPERTIES = [
        :run_mode, :runinterval, :splay, :phase_index, :phase_count, :phasing, :memory_max, :cpu_quota, :tasks_max,
        :facts, :generated_facts, :churn_percent, :apply_source, :agent_noop
      ].freeze

      RUN_MODES = Schema.fetch('run_modes', 'values').map(&:to_sym).freeze

      # The rules that turn a phase index into the offset of its runs.
      PHASINGS = Schema.fetch('phasings', 'values').map(&:to_sym).freeze

      NONE = Schema.fetch('limits', 'none')

      # The helper's ranges, inclusive.
      RANGES = [:runinterval, :splay, :phase_index, :phase_count, :tasks_max, :generated_facts, :churn_percent]
               .to_h { |name| [name, Schema.range(name)] }.freeze

      # What `clone create` sets when a flag is not given.
      CREATE_DEFAULTS = {
        run_mode: Schema.fetch('run_modes', 'default').to_sym,
        phasing: Schema.fetch('phasings', 'default').to_sym,
        memory_max: NONE, cpu_quota: NONE, tasks_max: NONE, facts: {}, apply_source: nil, agent_noop: :false
      }.merge(
        [:runinterval, :splay, :phase_index, :phase_count, :generated_facts, :churn_percent]
          .to_h { |name| [name, Schema.default(name)] },
      ).freeze

      # Properties that only mean something while the clone has a schedule:
      # the helper reads them back as null in manual mode.
      SCHEDULE = [:runinterval, :splay, :phase_index, :phase_count, :phasing].freeze

      MEMORY_SUFFIXES = Schema.fetch('limits', 'memory_suffixes')
      MEMORY = %r{\A([1-9][0-9]{0,#{Schema.fetch('limits', 'memory_max_digits') - 1}})([#{MEMORY_SUFFIXES.join}]?)\z}.freeze
      MEMORY_UNITS = ([''] + MEMORY_SUFFIXES).each_with_index.to_h { |suffix, power| [suffix, 1024**power] }.freeze
      CPU_QUOTA_PERCENT = Schema.fetch('limits', 'cpu_quota_percent').then { |r| r.fetch('min')..r.fetch('max') }
      CPU_QUOTA = %r{\A([1-9][0-9]{0,#{CPU_QUOTA_PERCENT.max.to_s.length - 1}})%\z}.freeze
      FACT_NAME = Schema.anchored(Schema.fetch('facts', 'name_pattern'))
      MAX_FACT_NAME = Schema.fetch('facts', 'max_name_length')
      MAX_FACT_STRING = Schema.fetch('facts', 'max_string_length')
      # What the helper binds as an apply source: absolute, no '..', and only
      # characters that go into a unit file as they are.
      APPLY_SOURCE = Schema.anchored(Schema.fetch('apply_source', 'pattern'))

      # `apply_source`: an absolute host path the helper can bind into a
      # clone (that it holds manifests/, and is root's and writable by no one
      # else all the way up, is checked by the helper, on the host).
      def self.apply_source(value)
        text = value.to_s
        return text if value.is_a?(String) && text.match?(APPLY_SOURCE)

        raise ArgumentError,
              "apply_source must be an absolute path of a host directory with manifests/ (#{Schema.fetch('apply_source', 'rule')}), " \
              "e.g. '/srv/clone-army-apply'; got #{value.inspect}"
      end

      # An Integer (or a string of digits, as `puppet resource` passes it)
      # within the helper's range for `attribute`.
      def self.integer(attribute, value, range = RANGES.fetch(attribute))
        number = Integer(value.to_s, 10) if value.is_a?(Integer) || value.to_s.match?(%r{\A[0-9]+\z})
        return number if number && range.cover?(number)

        raise ArgumentError, "#{attribute} must be an integer from #{range.min} to #{range.max}; got #{value.inspect}"
      end

      # `memory_max`: bytes as an Integer, or a string of bytes with an
      # optional K, M, G or T suffix (base 1024), or 'none'. Munged to the
      # string the helper takes.
      def self.memory_max(value)
        text = value.to_s
        return text if text == NONE || (scalar?(value) && text.match?(MEMORY))

        raise ArgumentError,
              'memory_max must be a positive number of bytes, optionally with a K, M, G or T suffix (base 1024, ' \
              "e.g. '512M'), or 'none' for no limit; got #{value.inspect}"
      end

      # `cpu_quota`: a percentage of one CPU from 1% to 100000% ('50%', or
      # the Integer 50), or 'none'. Munged to the string the helper takes.
      def self.cpu_quota(value)
        return NONE if value == NONE

        text = value.is_a?(Integer) ? "#{value}%" : value.to_s
        return text if scalar?(value) && CPU_QUOTA_PERCENT.cover?(cpu_percent(text).to_i)

        raise ArgumentError,
              "cpu_quota must be a percentage of one CPU from '#{CPU_QUOTA_PERCENT.min}%' to '#{CPU_QUOTA_PERCENT.max}%' " \
              "(e.g. '50%', or the integer 50), " \
              "or 'none' for no limit; got #{value.inspect}"
      end

      def self.scalar?(value)
        value.is_a?(Integer) || value.is_a?(String)
      end

      # `tasks_max`: an Integer in the helper's range, or 'none'.
      def self.tasks_max(value)
        value == NONE ? NONE : integer(:tasks_max, value)
      end

      # `facts`: a Hash of fact names (FACT_NAME) to strings (at most
      # MAX_FACT_STRING characters), numbers or booleans.
      def self.facts(attribute, value)
        raise ArgumentError, "#{attribute} must be a Hash of fact names to values; got #{value.inspect}" unless value.is_a?(Hash)

        value.each do |name, fact|
          unless name.is_a?(String) && name.match?(FACT_NAME)
            raise ArgumentError,
                  "#{attribute}: fact name #{name.inspect} is invalid; allowed: 1 to #{MAX_FACT_NAME} characters of a-z, 0-9 and '_'"
          end
          next if fact_value?(fact)

          raise ArgumentError,
                "#{attribute}: fact #{name} must be a string of at most #{MAX_FACT_STRING} characters, a number " \
                "or a boolean; got #{fact.inspect}"
        end
        value
      end

      def self.fact_value?(fact)
        case fact
        when String then fact.length <= MAX_FACT_STRING
        when Integer, true, false then true
        when Float then fact.finite?
        else false
        end
      end

      # The bytes a memory_max means; nil for no limit.
      def self.memory_bytes(value)
        match = value.to_s.match(MEMORY)
        match && (Integer(match[1], 10) * MEMORY_UNITS.fetch(match[2]))
      end

      # The percentage a cpu_quota means; nil for no limit.
      def self.cpu_percent(value)
        match = value.to_s.match(CPU_QUOTA)
        match && Integer(match[1], 10)
      end

      # The facts of `shape` as the helper reads them from `--facts-file`
      # (JSON), or nil where the shape sets none.
      def self.facts_file_content(shape)
        shape.key?(:facts) ? JSON.generate(shape[:facts]) : nil
      end

      # `shape` as the helper takes it: the facts given as the file at
      # `facts_path`, written from facts_file_content (nil: none).
      def self.for_helper(shape, facts_path)
        options = shape.reject { |key, _| key == :facts }
        options[:facts_file] = facts_path if facts_path
        options
      end

      # The shape properties of one entry of `clone list`. A limit the
      # helper reports as null is 'none'; a run mode or schedule value it
      # reports as null (or leaves out: an older helper) is :absent, as is
      # churn_percent without generated facts.
      def self.from_helper(clone)
        read = ->(name, null) { clone[name.to_s].nil? ? null : clone[name.to_s] }
        shape = { run_mode: read.call(:run_mode, :absent).to_sym, generated_facts: read.call(:generated_facts, 0) }
        shape[:facts] = clone['facts'].is_a?(Hash) ? clone['facts'] : {}
        [:memory_max, :cpu_quota, :tasks_max].each { |name| shape[name] = read.call(name, NONE) }
        (SCHEDULE + [:churn_percent, :apply_source]).each { |name| shape[name] = read.call(name, :absent) }
        shape[:phasing] = shape[:phasing].to_sym
        # An older helper, which has no noop, leaves it out: its clones run for real.
        shape[:agent_noop] = clone['agent_noop'] == true ? :true : :false
        shape
      end
    end
  end
end
