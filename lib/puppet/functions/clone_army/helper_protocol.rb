# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/helper'

# @summary The version of the helper's protocol that this module speaks.
#
# The providers refuse an answer in any other version
# (`PuppetX::CloneArmy::Helper::PROTOCOL_VERSION`, the one place it is
# written on the Puppet side); class clone_army also checks a helper it is
# about to install with it, so that a mismatched one is refused before it
# replaces the installed one.
Puppet::Functions.create_function(:'clone_army::helper_protocol') do
  # @return [Integer] The protocol version, e.g. 1.
  # @example
  #   clone_army::helper_protocol()
  dispatch :helper_protocol do
    return_type 'Integer[1]'
  end

  def helper_protocol
    PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
  end
end
