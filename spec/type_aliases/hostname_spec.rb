# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Hostname' do
  it { is_expected.to allow_values('puppet', 'puppet.example.com', 'clone1.load-host.example.com', 'Puppet.Example.COM') }
  it { is_expected.not_to allow_values('', 'puppet.', '.puppet', '-puppet', 'pup_pet', 'a b', 'a' * 254, "#{'a' * 64}.com") }
end
