# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/master_param'

# @summary The server given to the class as `server`, or as the deprecated `master`.
#
# @api private
#
# `master` is taken with the warning `clone_army: master is deprecated, give
# server instead (the same value)`; both given with different values is an
# error. `clone_army_clone` and `clone_army_base` take their `master` the same
# way (all read `PuppetX::CloneArmy::MasterParam`).
Puppet::Functions.create_function(:'clone_army::given_server') do
  # @param server
  #   The class's `server`.
  # @param master
  #   The class's `master`.
  # @return [Optional[String]] The server, or `undef` when neither is given.
  # @example
  #   clone_army::given_server(undef, 'puppet.example.com')  # 'puppet.example.com', with a warning
  dispatch :given_server do
    param 'Optional[String]', :server
    param 'Optional[String]', :master
    return_type 'Optional[String]'
  end

  def given_server(server, master)
    PuppetX::CloneArmy::MasterParam.given_server(server, master) do |message|
      call_function('warning', "clone_army: #{message}")
    end
  rescue ArgumentError => e
    raise Puppet::ParseError, "clone_army: #{e.message}"
  end
end
