# frozen_string_literal: true

require 'json'

module PuppetX
  module CloneArmy
    # The helper's rules, as `clone-army schema` prints them: name patterns,
    # ranges and defaults, the values of its enumerated flags, the capacity
    # figures and the error kinds. The module ships that answer as
    # schema.json beside this file (the helper's tests keep it current), so
    # a catalog compiles against the rules of the helper it deploys without
    # running it, and each rule is written down once, in the helper.
    module Schema
      PATH = File.join(__dir__, 'schema.json')
      DATA = JSON.parse(File.read(PATH)).freeze

      # The value at `keys`; a missing one is a broken install, said plainly.
      def self.fetch(*keys)
        value = DATA.dig(*keys)
        raise KeyError, "#{PATH} has no #{keys.join('.')}; the module's files are incomplete" if value.nil?

        value
      end

      # The inclusive range of an integer attribute.
      def self.range(name)
        bounds = fetch('ranges', name.to_s)
        bounds.fetch('min')..bounds.fetch('max')
      end

      # The helper's default for an integer attribute.
      def self.default(name)
        fetch('ranges', name.to_s, 'default')
      end

      # A name rule's pattern as a Ruby Regexp (anchored at the whole string).
      def self.name_pattern(kind)
        anchored(fetch('names', kind.to_s, 'pattern'))
      end

      # `^...$` as written for every engine, anchored the way Ruby means it.
      def self.anchored(pattern)
        Regexp.new("\\A#{pattern.delete_prefix('^').delete_suffix('$')}\\z")
      end
    end
  end
end
