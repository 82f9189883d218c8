# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Memory_max' do
  it { is_expected.to allow_values(1, 536_870_912, '512M', '1G', '2T', '100K', '4096') }
  it { is_expected.not_to allow_values(0, -1, '512m', '0', '05M', '1.5G', '512 M', 'none', '', :undef) }
end
