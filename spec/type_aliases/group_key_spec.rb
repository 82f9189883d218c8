# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/schema'

describe 'Clone_army::Group_key' do
  it do
    is_expected.to allow_values('pp_role', 'node', 'environment', 'pp_apptier', '1.3.6.1.4.1.34380.1.1.13',
                                '1.3.6.1.4.1.34380.1.2.1.20')
  end

  it do
    is_expected.not_to allow_values('', 'role', 'PP_ROLE', 'pp_preshared_key', 'pp_authorization', 'pp_auth_role',
                                    '1.3.6.1.4.1.34380.1.1.4', '1.3.6.1.4.1.34380.1.3.1', '1.3.6.1.4.1.34380.1.2.',
                                    "pp_role\nExecStartPre=/bin/sh", 'pp_role ', 13, :undef)
  end

  it 'takes the helper\'s examples and refuses its counter-examples' do
    rule = PuppetX::CloneArmy::Schema.fetch('group_key')
    is_expected.to allow_values(*rule.fetch('valid'))
    is_expected.not_to allow_values(*rule.fetch('invalid'))
  end
end
