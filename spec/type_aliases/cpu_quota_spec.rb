# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Cpu_quota' do
  it { is_expected.to allow_values(1, 50, 100_000, '1%', '50%', '99999%', '100000%') }
  it { is_expected.not_to allow_values(0, 100_001, '0%', '100001%', '050%', '50', '5.5%', 'none', :undef) }
end
