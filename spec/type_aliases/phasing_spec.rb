# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Phasing' do
  it { is_expected.to allow_values('prefix-even', 'fleet-even') }
  it { is_expected.not_to allow_values('even', 'vdc', 'Prefix-even', :undef) }
end
