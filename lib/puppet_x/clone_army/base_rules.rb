# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # What `clone-army base create` takes as --release (by OS) and --mirror:
    # the helper's rules, checked in the type as well so a bad value fails
    # when the catalog is built, with a message that names the attribute.
    module BaseRules
      # { os => [pattern, what it allows in words] }
      RELEASES = Schema.fetch('base_releases').transform_values do |rule|
        [Schema.anchored(rule.fetch('pattern')), rule.fetch('rule')]
      end.freeze
      MIRROR = Schema.anchored(Schema.fetch('base_mirror', 'pattern'))
      MIRROR_RULE = Schema.fetch('base_mirror', 'rule')

      # A release some OS takes; the OS's own rule is checked once the OS is
      # known (validate_release_of).
      def self.validate_release(value)
        return if value.is_a?(String) && RELEASES.values.any? { |pattern, _| value.match?(pattern) }

        rules = Schema.fetch('os').map { |os| RELEASES.fetch(os).last }.uniq
        raise ArgumentError, "release must be #{rules.join(', or ')}; got #{value.inspect}"
      end

      def self.validate_release_of(os, value)
        pattern, rule = RELEASES.fetch(os.to_s)
        return if value.match?(pattern)

        raise ArgumentError, "release must be #{rule} for os #{os}; got #{value.inspect}"
      end

      def self.validate_mirror(value)
        return if value.is_a?(String) && value.match?(MIRROR)

        raise ArgumentError, "mirror must be #{MIRROR_RULE} without spaces or control characters; got #{value.inspect}"
      end
    end
  end
end
