# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # The names the helper accepts (docs/PROTOCOL.md, "Names"), checked in
    # the types as well so a bad value fails when the catalog is built, with a
    # message that names the attribute.
    module Names
      # Clone and base names: the helper's pattern and rule.
      NAME = Schema.name_pattern(:clone)
      NAME_RULE = Schema.fetch('names', 'clone', 'rule')
      # A base may not end like a clone's own directories beside it.
      BASE_RESERVED_SUFFIXES = Schema.fetch('names', 'base', 'reserved_suffixes')

      # Masters and certnames: labels separated by '.', at most
      # HOSTNAME_MAX_LENGTH characters in all.
      HOSTNAME = Schema.name_pattern(:hostname)
      HOSTNAME_MAX_LENGTH = Schema.fetch('names', 'hostname', 'max_length')
      HOSTNAME_RULE = Schema.fetch('names', 'hostname', 'rule')

      def self.validate_name(attribute, value, example)
        return if value.is_a?(String) && value.match?(NAME)

        raise ArgumentError, "#{attribute} must be #{NAME_RULE} (e.g. '#{example}'); got #{value.inspect}"
      end

      # A base name: a name that does not end in one of BASE_RESERVED_SUFFIXES.
      def self.validate_base_name(attribute, value, example)
        validate_name(attribute, value, example)
        suffix = BASE_RESERVED_SUFFIXES.find { |reserved| value.end_with?(reserved) }
        return unless suffix

        raise ArgumentError,
              "#{attribute} must not end in #{BASE_RESERVED_SUFFIXES.join(', ')} (a clone's own directories sit " \
              "beside the bases under those names) (e.g. '#{example}'); got #{value.inspect}"
      end

      def self.validate_hostname(attribute, value, example)
        return if value.is_a?(String) && value.length <= HOSTNAME_MAX_LENGTH && value.match?(HOSTNAME)

        raise ArgumentError, "#{attribute} must be #{HOSTNAME_RULE} (e.g. '#{example}'); got #{value.inspect}"
      end

      def self.validate_absolute_path(attribute, value)
        return if value.is_a?(String) && value.start_with?('/')

        raise ArgumentError, "#{attribute} must be an absolute path; got #{value.inspect}"
      end
    end
  end
end
