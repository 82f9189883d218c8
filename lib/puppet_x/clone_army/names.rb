# frozen_string_literal: true

module PuppetX
  module CloneArmy
    # The names the helper accepts (helper/PROTOCOL.md, "Names"), checked in
    # the types as well so a bad value fails when the catalog is built, with a
    # message that names the attribute.
    module Names
      # Clone and base names: 1 to 64 characters.
      NAME = %r{\A[a-z0-9][a-z0-9-]{0,63}\z}.freeze
      NAME_RULE = "1 to 64 characters of lower-case letters, digits and '-', starting with a letter or digit"

      # Masters and certnames: labels of letters, digits and '-', separated
      # by '.', at most 253 characters.
      LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
      HOSTNAME = %r{\A(?=.{1,253}\z)#{LABEL}(?:\.#{LABEL})*\z}.freeze
      HOSTNAME_RULE = "a host name: labels of letters, digits and '-' separated by '.', at most 253 characters"

      def self.validate_name(attribute, value, example)
        return if value.is_a?(String) && value.match?(NAME)

        raise ArgumentError, "#{attribute} must be #{NAME_RULE} (e.g. '#{example}'); got #{value.inspect}"
      end

      def self.validate_hostname(attribute, value, example)
        return if value.is_a?(String) && value.match?(HOSTNAME)

        raise ArgumentError, "#{attribute} must be #{HOSTNAME_RULE} (e.g. '#{example}'); got #{value.inspect}"
      end

      def self.validate_absolute_path(attribute, value)
        return if value.is_a?(String) && value.start_with?('/')

        raise ArgumentError, "#{attribute} must be an absolute path; got #{value.inspect}"
      end
    end
  end
end
