# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/helper'

# @summary The version of the helper's protocol that this module speaks.
#
# @api private
#
# The version of the helper's protocol (`docs/PROTOCOL.md`) that the
# module's providers speak (`PuppetX::CloneArmy::Helper::PROTOCOL_VERSION`,
# the one place it is written on the Puppet side). The providers refuse an
# answer in any other version (`protocol-mismatch`, saying whether the module
# or the helper is the older one and what to install); class clone_army's
# private clone_army::install checks a helper it is about to install with
# it, so that a mismatched one is refused before it replaces the installed
# one.
Puppet::Functions.create_function(:'clone_army::helper_protocol') do
  # @return [Integer] The protocol version, e.g. 2.
  # @example
  #   notice("this module speaks protocol version ${clone_army::helper_protocol()}")
  dispatch :helper_protocol do
    return_type 'Integer[1]'
  end

  def helper_protocol
    PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
  end
end
