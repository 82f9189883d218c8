# frozen_string_literal: true

require_relative 'names'

module PuppetX
  module CloneArmy
    # The check of the `helper` parameter every type carries. Each type writes
    # the parameter out itself, where puppet-strings reads its text for
    # REFERENCE.md; this one check, and a spec that holds the texts to one
    # another, keep the copies from drifting apart.
    module HelperParam
      def self.validate(value)
        PuppetX::CloneArmy::Names.validate_absolute_path('helper', value)
      end
    end
  end
end
