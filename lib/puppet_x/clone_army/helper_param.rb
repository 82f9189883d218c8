# frozen_string_literal: true

require_relative 'names'

module PuppetX
  module CloneArmy
    # The `helper` parameter both types carry: one definition, so the two
    # cannot drift apart in what they accept or how they document it.
    module HelperParam
      def self.define(type)
        type.newparam(:helper) do
          desc <<-DOC
            The path of the `clone-army` helper the provider runs. Defaults to
            `/usr/local/sbin/clone-army` (where class clone_army installs it);
            a `clone-army` on the PATH is never run. A `File` resource for this
            path is autorequired, so the helper is installed before it is used.
          DOC

          validate do |value|
            PuppetX::CloneArmy::Names.validate_absolute_path('helper', value)
          end
        end
      end
    end
  end
end
