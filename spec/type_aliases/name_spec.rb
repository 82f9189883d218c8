# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Name' do
  it { is_expected.to allow_values('clone1', 'debian-12', 'a', '0', 'x' * 64) }
  it { is_expected.not_to allow_values('Clone1', '-a', 'a_b', 'a.b', '', 'x' * 65, 'a b', 1, :undef) }
end
